// Filled in by issue 13 work; see the tests below.
#include <gtest/gtest.h>
