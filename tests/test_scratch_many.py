import json, time
from tests.test_folders import Server, env, server_a  # noqa

def test_many(server_a, env):
    slug, _ = server_a.hub()
    folder = env / "many"
    folder.mkdir()
    for i in range(1000):
        (folder / f"note {i:05d}.md").write_text(f"Note number {i} links to [[note {(i + 1) % 1000:05d}]].")
    t = time.time()
    r = json.loads(server_a.run("import", "folder", str(folder), "--json").stdout)
    print("first", time.time() - t, r["pages"])
    t = time.time()
    r = json.loads(server_a.run("import", "folder", str(folder), "--json").stdout)
    print("second", time.time() - t, r["pages"])
    assert 0
