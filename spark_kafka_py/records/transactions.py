"""read_committed filtering of aborted transactions (KIP-98), as Kafka's Java consumer does.

Source: ``clients/src/main/java/org/apache/kafka/clients/consumer/internals/
CompletedFetch.java`` (``nextFetchedRecord``, ``consumeAbortedTransactionsUpTo``,
``isBatchAborted``, ``containsAbortMarker``). For each batch with a producer id, in order:

1. every aborted transaction ``(producer_id, first_offset)`` of the Fetch response with
   ``first_offset <= batch.lastOffset`` (taken in ``first_offset`` order) marks its producer
   as aborted;
2. a control batch whose first record is an ABORT marker clears its producer's mark (the
   aborted transaction ends there); COMMIT markers change nothing;
3. otherwise a transactional batch of a marked producer is skipped whole.

Control batches are never returned, whatever the isolation level.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

__all__ = ["AbortedTransactions"]


class AbortedTransactions:
    """The aborted-transaction state of one fetched partition.

    Args:
        aborted: the Fetch response's ``aborted_transactions`` for the partition, as
            ``(producer_id, first_offset)`` pairs in any order.
    """

    __slots__ = ("_pending", "aborted_producers")

    @classmethod
    def of(cls, aborted: Sequence[tuple[int, int]] | AbortedTransactions) -> AbortedTransactions:
        """``aborted`` itself when it is already a state (a response decoded in pieces keeps
        one), else a new state from the ``(producer_id, first_offset)`` pairs."""
        return aborted if isinstance(aborted, AbortedTransactions) else cls(aborted)

    def __init__(self, aborted: Sequence[tuple[int, int]]) -> None:
        self._pending = [(int(first), int(pid)) for pid, first in aborted]
        heapq.heapify(self._pending)
        #: producer ids whose current transaction is aborted.
        self.aborted_producers: set[int] = set()

    def consume_up_to(self, offset: int) -> None:
        """Mark the producers of aborted transactions that begin at or before ``offset``."""
        pending = self._pending
        while pending and pending[0][0] <= offset:
            _, pid = heapq.heappop(pending)
            self.aborted_producers.add(pid)

    def is_aborted(self, producer_id: int) -> bool:
        """Whether a transactional batch of ``producer_id`` belongs to an aborted txn."""
        return producer_id in self.aborted_producers

    def end_aborted(self, producer_id: int) -> None:
        """An ABORT marker of ``producer_id`` ends its aborted transaction."""
        self.aborted_producers.discard(producer_id)

    def snapshot(self) -> tuple[list[tuple[int, int]], set[int]]:
        """The current state, for :meth:`restore` (a decoder that starts a piece of a
        response over with another implementation goes back to it)."""
        return list(self._pending), set(self.aborted_producers)

    def restore(self, state: tuple[list[tuple[int, int]], set[int]]) -> None:
        """Go back to a state taken by :meth:`snapshot` (in place: holders see it)."""
        pending, producers = state
        self._pending = list(pending)
        self.aborted_producers = set(producers)
