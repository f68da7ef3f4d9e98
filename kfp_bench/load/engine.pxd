# Types for the Cython twin of engine.py (see that module's docstring). engine.py stays plain
# Python; these declarations turn its three classes into extension types with C fields, which is
# what makes the compiled request path cheap. Every field the classes set in __init__ is here.

cimport cython

cdef class Attack

cdef class _Conn:
    cdef public Attack a
    cdef public object parser, feed, status_code, keeps_alive, transport, write
    cdef public bint busy, dead
    cdef public long long seq, nbody
    cdef public double intended, sent, written, first, last, connect, dns, qps_due

cdef class _HeadConn(_Conn):
    pass

cdef class Attack:
    cdef dict __dict__
    cdef public bytearray buf
    cdef public double[::1] rows
    cdef public Py_ssize_t off, cap
    cdef public long long seq, inflight
    cdef public double remaining
    cdef public bint fast, keepalive
    cdef public bytes request
    cdef public list connects, errors, batch
    cdef public object batch_cb, call_soon

    @cython.locals(conn=_Conn, now=double)
    cpdef send_batch(self)

cdef Py_ssize_t NCOLS
