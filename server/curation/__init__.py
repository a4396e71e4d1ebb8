"""AI curation: per-doc enrichment, the hub concept digest, suggested bundles, bundle analysis.

One module per job. Everything works with no model at all (extractive mode); a chat model
through the `openai` client makes the same shapes richer. See contract.py for what a model
must return and how its output is checked before anything is stored.
"""
