"""Embedders (one backend a module), the embedding child process, the question lane and the optional reranker."""
