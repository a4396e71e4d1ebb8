"""Derived work owed by saved docs: chunking, embedding chunks and docs, the worker loop."""
