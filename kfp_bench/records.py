"""The record types every layer shares: the ground floor of kfp-bench.

Engines emit records, aggregators consume them and reporters never look further down than this
module to learn a record's shape. All records are frozen, slotted dataclasses.

Times are seconds. ``intended`` and ``sent`` are offsets from the start of the attack (a monotonic
clock); the attack's wall-clock start is kept in its stats, so records stay small.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Result:
    """One HTTP request of a load attack.

    Attributes:
        seq: sequence number of the request within its worker process.
        intended: when the schedule meant the request to be sent (s from the attack's start); equal
            to ``sent`` in closed-loop mode, where there is no schedule.
        sent: when the request was actually written (s from the attack's start).
        latency: from ``sent`` to the last byte of the response (s); for a failed request, to the
            moment of failure.
        status: HTTP status code, or 0 when no response was received.
        bytes_in: response body bytes.
        bytes_out: request bytes written (head and body).
        error: the transport error text, empty on success.
        connect: DNS lookup and TCP (and TLS) connect time charged to this request (s); 0 on a
            reused connection.
        dns: the DNS part of ``connect`` (s).
        write: time to hand the request to the kernel (s).
        wait: from the end of the write to the first response byte (s).
        read: from the first to the last response byte (s).
    """

    seq: int
    intended: float
    sent: float
    latency: float
    status: int
    bytes_in: int
    bytes_out: int
    error: str = ""
    connect: float = 0.0
    dns: float = 0.0
    write: float = 0.0
    wait: float = 0.0
    read: float = 0.0

    @property
    def corrected_latency(self) -> float:
        """Latency measured from the intended send time: the coordinated-omission-free figure."""
        return self.latency + (self.sent - self.intended)

    @property
    def ok(self) -> bool:
        """True for a response with a 1xx-3xx status; 4xx, 5xx and transport errors are failures."""
        return not self.error and 0 < self.status < 400
