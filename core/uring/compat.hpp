#pragma once
// Definitions that Debian 12's liburing 2.3 headers lack but the running
// kernel may offer. Everything used here is probed at run time before use
// (core/uring/features.cpp); this is the one place such gaps are filled.

#include <liburing.h>

#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)  // 6.1
#endif
#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER (1U << 12)  // 6.0
#endif
#ifndef IORING_SETUP_NO_SQARRAY
// A ring without the SQ index array: the kernel takes entries in order (6.6).
// liburing 2.3 cannot set such a ring up itself (it fills the array it
// would not have): see queue_init in core/uring/ring.cpp.
#define IORING_SETUP_NO_SQARRAY (1U << 16)
#endif
#ifndef IORING_RECV_MULTISHOT
#define IORING_RECV_MULTISHOT (1U << 1)  // 6.0
#endif
#ifndef IORING_SEND_ZC_REPORT_USAGE
// sqe->ioprio flag of a zero-copy send: its notification's res then says
// whether the kernel copied the data after all (6.2).
#define IORING_SEND_ZC_REPORT_USAGE (1U << 3)
#endif
#ifndef IORING_NOTIF_USAGE_ZC_COPIED
#define IORING_NOTIF_USAGE_ZC_COPIED (1U << 31)  // in a zero-copy notification's res (6.2)
#endif
#ifndef IORING_FEAT_MIN_TIMEOUT
// io_uring_getevents_arg's `pad` is min_wait_usec: wait up to that long for
// the batch asked for, then return with whatever has come (6.12).
#define IORING_FEAT_MIN_TIMEOUT (1U << 15)
#endif
#ifndef IORING_RECVSEND_BUNDLE
// sqe->ioprio flag of a receive with buffer select: one completion may take
// several provided buffers, the consecutive ring entries from the one its
// flags name (6.10).
#define IORING_RECVSEND_BUNDLE (1U << 4)
#endif
#ifndef IORING_FEAT_RECVSEND_BUNDLE
#define IORING_FEAT_RECVSEND_BUNDLE (1U << 14)  // params.features: bundles taken (6.10)
#endif
#ifndef IOU_PBUF_RING_INC
// io_uring_buf_reg.flags (`pad` in liburing 2.3's header): the ring's
// buffers are consumed in part, each receive right after the last (6.12).
#define IOU_PBUF_RING_INC 2
#endif
#ifndef IORING_CQE_F_BUF_MORE
// In a completion from an incremental ring: the kernel keeps the buffer and
// puts the next bytes right after these (6.12).
#define IORING_CQE_F_BUF_MORE (1U << 4)
#endif
// liburing's own mark (src/int_flags.h, not installed) that
// io_uring_register_ring_fd succeeded, so enter_ring_fd is an index into
// the registered rings (2.2 and later).
#define RINGHTTP_LIBURING_INT_FLAG_REG_RING 1
