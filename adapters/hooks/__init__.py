"""The coding tools' hooks: a session starts with its project's memory and ends as a page.

`python -m memorywiki.adapters.hooks TOOL EVENT` is what `memorywiki install TOOL --hooks`
registers. It is started once per event by the tool, so it imports only the standard library
on its way to an answer (main.py, lean.py); reading a transcript and saving it happens in a
detached child (capture.py), so a session's end never waits for it.
"""
