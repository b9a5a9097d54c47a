"""Readers of other tools' memories, each into a ``transfer.incoming.Batch`` (uses
``transfer`` and below); they read, never write: ``transfer`` applies the batch.
"""
