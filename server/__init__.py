"""Memory.Wiki server: HTTP contract, pages, store, indexing, recall."""
