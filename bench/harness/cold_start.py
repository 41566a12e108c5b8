"""Cold start: exec to the first right answer, once per server instance."""
import statistics

from .constants import COLD_START_SPAWNS
from .processes import Running


# Cold start: once per server instance.

def cold_start(ctx, server, variant):
    """Exec to the first right answer to GET /plaintext (see Running), the
    median of COLD_START_SPAWNS spawns. A server that never answers rightly
    raises WrongAnswer on its first spawn."""
    times = []
    for _ in range(COLD_START_SPAWNS):
        running = Running(ctx, server, variant, right_answer=True)
        times.append(running.answered_right_s)
        running.stop()
    return statistics.median(times) * 1000
