"""Full text in scripts written without spaces: BM25 with main's analyzer and with this one.

    python -m bench cjk --data /work/data/raw     # CMRC 2018, JSQuAD, KorQuAD, ARCD + SciFact
    python -m bench cjk --smoke                   # 60 paragraphs per set, one timing round

The corpora are reading-comprehension sets in SQuAD layout, turned into retrieval sets: the
corpus is the unique paragraphs (each a doc of one chunk, under its article's title), each
question a query, its own paragraph the one relevant passage. Everything runs on PostgreSQL's
BM25 itself (rows written with SQL, the triggers post them, bm25_search answers): no server
and no embedder, so the analyzer is the only thing that differs between

- before: main's analyzer, to_tsvector('english') for every script (bm25_tsvector() redefined
  as exactly that in its database), and
- after: this checkout's (server/store/functions/25_bm25_analyzer.sql).

Per set: nDCG@10 and recall@10; the probe (ten short notes per language in which the question's
word sits inside a longer run: right note first, out of 10); the analyzer's cost per chunk;
indexing (one INSERT of the set's chunks, posted at COMMIT) and bm25_search per question, in CPU
time of the PostgreSQL backend and in wall time. SciFact (English) is the control that must not
move: the same top 10 with the same scores for every question, speed within noise. Timings
alternate before and after and keep the best of --rounds. Korean is also run with whitespace
words added to its bigrams, the alternative the analyzer was chosen against.

Writes bench/results/cjk.md (or --out) and prints it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from ..common import (
    CACHE,
    RESULTS,
    ROOT,
    SHARED_DATA,
    MissingData,
    Postgres,
    load_beir,
    log,
    machine_line,
    md_table,
    pct,
    process_cpu_s,
    require_beir,
)
from . import quality

RAW_DATA = ROOT.parent / "data" / "raw"


@dataclass(frozen=True)
class Source:
    file: str
    name: str
    language: str
    origin: str
    license: str


SOURCES = {
    "zh": Source(
        "cmrc2018_dev.json",
        "CMRC 2018 dev",
        "Chinese",
        "https://github.com/ymcui/cmrc2018 (squad-style-data/cmrc2018_dev.json)",
        "CC BY-SA 4.0",
    ),
    "ja": Source(
        "jsquad_valid.json",
        "JSQuAD v1.3 valid (JGLUE)",
        "Japanese",
        "https://github.com/yahoojapan/JGLUE (datasets/jsquad-v1.3/valid-v1.3.json)",
        "CC BY-SA 4.0",
    ),
    "ko": Source(
        "korquad_v1_dev.json",
        "KorQuAD 1.0 dev",
        "Korean",
        "https://github.com/korquad/korquad.github.io (dataset/KorQuAD_v1.0_dev.json)",
        "CC BY-ND 2.0 KR",
    ),
    "ar": Source("arcd.json", "ARCD", "Arabic", "https://github.com/husseinmozannar/SOQAL (data/arcd.json)", "MIT"),
}

# Ten notes per language, each with a question whose word sits inside a longer run of the note
# (Chinese and Japanese: inside a clause; Korean: the word with another particle), so that the
# question and the note share no whole run or whole Korean word.
PROBE = {
    "zh": [
        ("我们团队每周五下午在三楼会议室做代码评审，大家轮流讲解自己的改动。", "代码评审安排在什么时候？"),
        ("数据库备份脚本每天凌晨两点自动运行并上传到对象存储。", "备份脚本多久运行一次？"),
        ("新同事入职第一天需要去前台领取门禁卡和笔记本电脑。", "门禁卡去哪儿领？"),
        ("线上服务的告警阈值设置为错误率超过百分之五。", "告警阈值是多少？"),
        ("周末爬山时记得带足饮用水和防晒霜。", "爬山要带防晒霜吗？"),
        ("这家餐厅的招牌菜是红烧肉，每天限量供应二十份。", "招牌菜是什么？"),
        ("我的护照将在明年三月到期，需要提前办理续签。", "护照哪天到期？"),
        ("客户反馈登录页面加载太慢，前端组正在压缩图片体积。", "登录页面为什么慢？"),
        ("年度预算会议推迟到下个月十五号举行。", "预算会议改到哪天？"),
        ("猫粮快吃完了，下次去超市要买两袋。", "猫粮还剩多少？"),
    ],
    "ja": [
        ("毎週金曜日の午後に三階の会議室でコードレビューを行います。", "コードレビューはいつですか？"),
        ("データベースのバックアップは毎晩二時に自動で実行されます。", "バックアップは何時に動きますか？"),
        ("新入社員は初日に受付で入館証とノートパソコンを受け取ります。", "入館証はどこでもらえますか？"),
        ("本番環境のアラートはエラー率が五パーセントを超えると通知されます。", "アラートの条件は？"),
        ("週末の登山には十分な水と日焼け止めを持っていきましょう。", "登山に日焼け止めは必要？"),
        ("この店の看板料理は豚の角煮で、一日二十食限定です。", "看板料理は何ですか？"),
        ("私のパスポートは来年三月に期限が切れるので、早めに更新が必要です。", "パスポートの期限はいつ？"),
        ("ログイン画面の表示が遅いという苦情があり、画像の軽量化を進めています。", "ログイン画面が遅い理由は？"),
        ("年間予算の会議は来月十五日に延期されました。", "予算会議はいつに延期？"),
        ("キャットフードがもうすぐなくなるので、次に買い物へ行くとき二袋買います。", "キャットフードは何袋買う？"),
    ],
    "ko": [
        ("매주 금요일 오후에 삼층 회의실에서 코드리뷰를 진행합니다.", "코드리뷰는 언제 하나요?"),
        ("데이터베이스 백업 스크립트는 매일 새벽 두 시에 자동으로 실행됩니다.", "백업은 언제 돌아가나요?"),
        ("신입 사원은 첫날 안내 데스크에서 출입증과 노트북을 받습니다.", "출입증은 어디서 주나요?"),
        ("운영 서버의 알림은 오류율이 오 퍼센트를 넘으면 발송됩니다.", "알림 기준이 뭐예요?"),
        ("주말 등산에는 충분한 물과 자외선차단제를 챙기세요.", "등산할 때 자외선차단제가 필요한가요?"),
        ("이 식당의 대표메뉴는 갈비찜이고 하루 스무 그릇만 팝니다.", "대표메뉴가 무엇인가요?"),
        ("제 여권은 내년 삼월에 만료되어서 미리 갱신해야 합니다.", "여권이 언제 만료돼요?"),
        ("로그인 화면이 느리다는 불만이 있어서 이미지 용량을 줄이고 있습니다.", "로그인화면이 왜 느려요?"),
        ("연간 예산 회의는 다음 달 십오일로 연기되었습니다.", "예산회의는 언제로 미뤄졌나요?"),
        ("고양이 사료가 거의 떨어져서 다음에 마트에 가면 두 봉지 살 거예요.", "고양이사료를 얼마나 사야 하나요?"),
    ],
}

# main's analyzer, in the "before" database: every script through the English configuration
BEFORE = """
CREATE OR REPLACE FUNCTION bm25_tsvector(p_text text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT to_tsvector('english', p_text) $$
"""

# The alternative for Korean: each whole Hangul word (a run of three syllables or more; shorter
# ones are their own bigram or unigram already) as a term besides its bigrams.
HANGUL_WORDS = """
ALTER FUNCTION bm25_cjk_terms(text) RENAME TO bm25_cjk_bigrams;
CREATE FUNCTION bm25_cjk_terms(p_text text) RETURNS TABLE (term text, start integer)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT term, start FROM bm25_cjk_bigrams(p_text)
    UNION ALL
    SELECT m[1], 0 FROM regexp_matches(p_text, '([\\uac00-\\ud7a3]{3,200})', 'g') AS m
$$
"""

ANALYZERS = {"before": BEFORE, "after": "", "ko-words": HANGUL_WORDS}


@dataclass
class Collection:
    key: str
    name: str
    docs: list[tuple[str, str, str]]  # (id, title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    results: dict[str, dict] = field(default_factory=dict)  # analyzer -> figures


# --------------------------------------------------------------------------- data


def require_raw(folder: Path) -> None:
    """Raise MissingData naming each missing file and where it comes from."""
    missing = [(key, s) for key, s in SOURCES.items() if not (folder / s.file).is_file()]
    if missing:
        lines = [
            f"bench: the CJK benchmark's data is not in {folder} (missing {', '.join(s.file for _, s in missing)}).",
            "Each file is a reading-comprehension set in SQuAD layout, from its public repository:",
        ]
        lines += [f"  {s.file}: {s.name} ({s.language}, {s.license}), {s.origin}" for _, s in missing]
        lines.append("Save them under those names in one folder and pass it with --data.")
        raise MissingData("\n".join(lines))


def load_squad(path: Path, key: str, limit: int | None = None) -> Collection:
    """Unique paragraphs as docs (JSQuAD's "title [SEP] " prefix dropped: the title is the
    heading), every question a query whose relevant doc is its paragraph."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    ids: dict[str, str] = {}
    docs: list[tuple[str, str, str]] = []
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for article in data:
        title = (article.get("title") or "").replace("_", " ").strip()
        for paragraph in article["paragraphs"]:
            text = paragraph["context"]
            if " [SEP] " in text[:200]:
                text = text.split(" [SEP] ", 1)[1]
            if text not in ids:
                if limit is not None and len(docs) >= limit:
                    continue
                ids[text] = f"p{len(docs)}"
                docs.append((ids[text], title, text))
            for qa in paragraph["qas"]:
                question = qa["question"].strip()
                if question:
                    queries[str(qa["id"])] = question
                    qrels[str(qa["id"])] = {ids[text]: 1}
    return Collection(key, SOURCES[key].name, docs, queries, qrels)


def load_probe(key: str) -> Collection:
    notes = PROBE[key]
    return Collection(
        f"probe-{key}",
        f"probe ({SOURCES[key].language})",
        [(f"n{i}", "Notes", note) for i, (note, _) in enumerate(notes)],
        {f"q{i}": question for i, (_, question) in enumerate(notes)},
        {f"q{i}": {f"n{i}": 1} for i in range(len(notes))},
    )


def load_scifact(folder: Path, limit: int | None = None) -> Collection:
    beir = load_beir(folder)
    corpus = beir.corpus[:limit] if limit else beir.corpus
    kept = {d["_id"] for d in corpus}
    qrels = {q: rels for q, rels in beir.qrels.items() if set(rels) & kept}
    return Collection(
        "en",
        "BEIR SciFact test",
        [(d["_id"], d["title"], d["text"]) for d in corpus],
        {q: beir.queries[q] for q in qrels},
        qrels,
    )


# --------------------------------------------------------------------------- PostgreSQL


def prepare(pg: Postgres, analyzer: str) -> str:
    url = pg.fresh(f"bench_cjk_{analyzer.replace('-', '_')}")
    if ANALYZERS[analyzer]:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(ANALYZERS[analyzer])
    return url


class Backend:
    """A connection and the CPU its PostgreSQL backend has used (its /proc entry: a cluster on
    this machine). CPU seconds barely move with the load of other processes, where wall
    seconds on a busy machine do; both are reported."""

    def __init__(self, url: str):
        self.conn = psycopg.connect(url, autocommit=True)
        self.pid = self.conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        comm = Path(f"/proc/{self.pid}/comm")
        self.local = comm.is_file() and comm.read_text().startswith("postgres")

    def cpu(self) -> float:
        return process_cpu_s(self.pid) if self.local else float("nan")


def load(db: Backend, docs: list[tuple[str, str, str]]) -> tuple[int, dict[int, str], float, float]:
    """An empty database, then the docs and their chunks in one transaction; returns the hub,
    chunk id -> doc id, and the wall and CPU seconds the transaction took (the triggers post at
    COMMIT)."""
    db.conn.execute("TRUNCATE hubs, docs, chunks CASCADE")
    hub = db.conn.execute("INSERT INTO hubs (slug, owner_token_hash) VALUES ('bench', 'x') RETURNING id").fetchone()[0]
    ids = [f"d{i:09d}" for i in range(len(docs))]
    rows = (hub, ids, [d[1] or d[0] for d in docs], [d[2] for d in docs])
    t0, c0 = time.perf_counter(), db.cpu()
    with db.conn.transaction():
        db.conn.execute(
            "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash)"
            " SELECT i, %s, t, m, 'e', 's' FROM unnest(%s::text[], %s::text[], %s::text[]) AS u(i, t, m)",
            rows,
        )
        db.conn.execute(
            "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
            " SELECT i, %s, 0, t, m, md5(m), ''::tsvector"
            " FROM unnest(%s::text[], %s::text[], %s::text[]) AS u(i, t, m)",
            rows,
        )
    wall, cpu = time.perf_counter() - t0, db.cpu() - c0
    # statistics of what is there now, and no plan kept from the set before: each search is
    # planned for this set, whenever autovacuum would have come by
    db.conn.execute("ANALYZE chunks, docs, bm25_postings, bm25_chunks, bm25_terms, bm25_hubs")
    db.conn.execute("DISCARD PLANS")
    by_doc = {doc_id: docs[i][0] for i, doc_id in enumerate(ids)}
    chunks = {cid: by_doc[doc_id] for cid, doc_id in db.conn.execute("SELECT id, doc_id FROM chunks")}
    return hub, chunks, wall, cpu


def analyzer_us(db: Backend) -> float:
    """The analyzer alone: CPU microseconds per chunk, body and heading."""
    n = db.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    c0 = db.cpu()
    db.conn.execute(
        "SELECT count(*) FROM chunks WHERE bm25_tsvector(markdown) || bm25_tsvector(heading_path) IS NOT NULL"
    ).fetchone()
    return (db.cpu() - c0) * 1e6 / max(n, 1)


def search(
    db: Backend, hub: int, queries: dict[str, str], chunks: dict[int, str]
) -> tuple[dict[str, dict[str, float]], list[float], float]:
    """Each question's top 10 (doc -> score), each search's wall milliseconds, and the CPU
    milliseconds of all of them."""
    run: dict[str, dict[str, float]] = {}
    times = []
    c0 = db.cpu()
    for qid, question in queries.items():
        t0 = time.perf_counter()
        rows = db.conn.execute("SELECT chunk_id, score FROM bm25_search(%s, %s, 10)", (hub, question)).fetchall()
        times.append((time.perf_counter() - t0) * 1000)
        run[qid] = {chunks[cid]: score for cid, score in rows}
    return run, times, (db.cpu() - c0) * 1000


# --------------------------------------------------------------------------- the benchmark


def measure(collections: list[Collection], urls: dict[str, str], rounds: int, *, speed: set[str]) -> None:
    """Quality for every collection under each analyzer it is run with; speed (best of
    `rounds`, before and after alternating) for the keys in `speed`."""
    dbs = {name: Backend(url) for name, url in urls.items()}
    try:
        for col in collections:
            timed = col.key in speed
            for r in range(rounds if timed else 1):
                korean = r == 0 and col.key in ("ko", "probe-ko")
                for name in ("before", "after", "ko-words") if korean else ("before", "after"):
                    db = dbs[name]
                    hub, chunks, wall, cpu = load(db, col.docs)
                    run, times, search_cpu = search(db, hub, col.queries, chunks)
                    f = col.results.setdefault(name, {key: [] for key in SPEED})
                    f["index_wall"].append(wall)
                    f["index_cpu"].append(cpu)
                    f["search_p50"].append(pct(times, 50))
                    f["search_mean"].append(sum(times) / max(len(times), 1))
                    f["search_cpu"].append(search_cpu / max(len(times), 1))
                    if timed:
                        f["analyzer_us"].append(analyzer_us(db))
                    f["run"] = run
                    log(
                        f"[cjk] {col.key} {name} round {r + 1}: {len(col.docs) / wall:.0f} chunks/s,"
                        f" search p50 {pct(times, 50):.2f} ms"
                    )
            for f in col.results.values():
                f.update(quality.evaluate(col.qrels, f["run"], ["ndcg@10", "recall@10"]))
                f["first"] = sum(1 for q, rels in col.qrels.items() if next(iter(f["run"][q]), None) in rels)
    finally:
        for db in dbs.values():
            db.conn.close()


SPEED = ("index_wall", "index_cpu", "search_p50", "search_mean", "search_cpu", "analyzer_us")


def same_ranking(col: Collection) -> tuple[int, int]:
    """Questions whose top 10 (ids and scores, to 12 places) are the same before and after."""
    before, after = col.results["before"]["run"], col.results["after"]["run"]
    same = sum(
        1
        for q in col.queries
        if [(d, round(s, 12)) for d, s in before[q].items()] == [(d, round(s, 12)) for d, s in after[q].items()]
    )
    return same, len(col.queries)


def report(sets: list[Collection], probes: dict[str, Collection], command: str, rounds: int) -> str:
    def ratio(before: float, after: float) -> str:
        return f"{after / before:.2f}" if before > 0 else "–"

    quality_rows, index_rows, search_rows = [], [], []
    for col in sets:
        b, a = col.results["before"], col.results["after"]
        probe = probes.get(col.key)
        quality_rows.append(
            [
                col.name,
                SOURCES[col.key].language if col.key in SOURCES else "English",
                len(col.docs),
                len(col.queries),
                b["ndcg@10"],
                a["ndcg@10"],
                b["recall@10"],
                a["recall@10"],
                f"{probe.results['before']['first']} / {len(probe.queries)}" if probe else "–",
                f"{probe.results['after']['first']} / {len(probe.queries)}" if probe else "–",
            ]
        )
        best = [{key: min(col.results[name][key]) for key in SPEED} for name in ("before", "after")]
        per_cpu_s = [len(col.docs) / f["index_cpu"] if f["index_cpu"] > 0 else float("nan") for f in best]
        per_s = [len(col.docs) / f["index_wall"] for f in best]
        index_rows.append(
            [
                col.name,
                *(f"{f['analyzer_us']:.0f}" for f in best),
                *(f"{x:.0f}" for x in per_cpu_s),
                ratio(*per_cpu_s),
                *(f"{x:.0f}" for x in per_s),
            ]
        )
        search_rows.append(
            [
                col.name,
                *(f"{f['search_cpu']:.2f}" for f in best),
                ratio(*(f["search_cpu"] for f in best)),
                *(f"{f['search_p50']:.2f}" for f in best),
                *(f"{f['search_mean']:.2f}" for f in best),
            ]
        )
    english = next(c for c in sets if c.key == "en")
    control_rows = [
        [
            r + 1,
            *(
                f"{english.results[name][key][r]:.2f}"
                for key in ("index_cpu", "index_wall")
                for name in ("before", "after")
            ),
            *(f"{english.results[name]['search_cpu'][r]:.2f}" for name in ("before", "after")),
        ]
        for r in range(rounds)
    ]
    ko = next(c for c in sets if c.key == "ko")
    korean_rows = [
        [
            label,
            ko.results[name]["ndcg@10"],
            ko.results[name]["recall@10"],
            f"{probes['ko'].results[name]['first']} / {len(probes['ko'].queries)}",
        ]
        for label, name in (
            ("English parser (main)", "before"),
            ("bigrams (this analyzer)", "after"),
            ("whitespace words + bigrams", "ko-words"),
        )
    ]
    words_gain = ko.results["ko-words"]["ndcg@10"] - ko.results["after"]["ndcg@10"]
    unchanged = {c.key: same_ranking(c) for c in sets if c.key in ("en", "ar")}
    lines = [
        "# Full text in scripts written without spaces (CJK bigrams)",
        "",
        f"`{command}` · {machine_line()}",
        "",
        "BM25 in PostgreSQL, rows written with SQL and posted by the triggers, questions through",
        "bm25_search (top 10). **before**: main's analyzer, `to_tsvector('english')` for every script.",
        "**after**: runs of Han, Kana and Hangul as overlapping character bigrams (a lone character",
        "as a unigram), everything else through `to_tsvector('english')` as before",
        "(server/store/functions/25_bm25_analyzer.sql). Corpus: each set's unique paragraphs, one",
        "doc and chunk each under its article's title; relevant: each question's own paragraph.",
        "Probe: ten notes per language whose question word sits inside a longer run of the note",
        "(Korean: the word with another particle); right note first, out of 10.",
        "",
        "## Quality",
        "",
        md_table(
            [
                "set",
                "language",
                "paragraphs",
                "questions",
                "nDCG@10 before",
                "nDCG@10 after",
                "recall@10 before",
                "recall@10 after",
                "probe before",
                "probe after",
            ],
            quality_rows,
        ),
        "",
        f"English control: {unchanged['en'][0]} of {unchanged['en'][1]} SciFact questions get the same top 10",
        "with the same scores (to 12 places) before and after. ARCD: "
        f"{unchanged['ar'][0]} of {unchanged['ar'][1]}: a few of its",
        "paragraphs name Chinese, Japanese or Korean things in their own script, whose terms change, and",
        "with them the set's average length, so every score moves a little.",
        "",
        "## Speed",
        "",
        f"Best of {rounds} rounds, before and after alternating on the same database cluster, in CPU",
        "time of the PostgreSQL backend (what the work costs, steady on a shared machine) and in wall",
        "time. Analyzer: `bm25_tsvector` of each chunk's body and heading alone. Indexing: one INSERT",
        "of every chunk of the set, BM25 postings written at COMMIT.",
        "",
        md_table(
            [
                "set",
                "analyzer µs/chunk before",
                "after",
                "indexing chunks/CPU-s before",
                "after",
                "ratio",
                "chunks/s (wall) before",
                "after",
            ],
            index_rows,
        ),
        "",
        "Search: bm25_search per question, CPU (mean) and wall (client side over a Unix socket).",
        "",
        md_table(
            ["set", "CPU ms before", "after", "ratio", "wall p50 ms before", "after", "wall mean ms before", "after"],
            search_rows,
        ),
        "",
        "English control, every round (a text without those scripts differs only by the one",
        "regular-expression test that sends it down the English path):",
        "",
        md_table(
            [
                "round",
                "indexing CPU s before",
                "after",
                "indexing wall s before",
                "after",
                "search CPU ms before",
                "after",
            ],
            control_rows,
        ),
        "",
        "## Korean: bigrams, or whitespace words and bigrams",
        "",
        "Korean is written with spaces between words, but each word carries its particles",
        "(도서관에서, 도서관은), so a word alone rarely matches the question's. With whole words added",
        "to the bigrams, a word that matches exactly scores twice.",
        "",
        md_table(["KorQuAD 1.0 dev", "nDCG@10", "recall@10", "probe"], korean_rows),
        "",
        f"Whole words change nDCG@10 by {words_gain:+.3f}: "
        + (
            "the analyzer keeps bigrams alone, as Lucene's CJKAnalyzer does."
            if words_gain <= 0
            else "on this run they would help Korean."
        ),
        "",
        "## Data",
        "",
        *[f"- {s.name} ({s.language}): {s.origin}, {s.license}." for s in SOURCES.values()],
        "- BEIR SciFact (English): the suite's SciFact (`--dataset`).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench cjk", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", type=Path, default=RAW_DATA, help=f"folder with {', '.join(s.file for s in SOURCES.values())}"
    )
    parser.add_argument("--dataset", type=Path, default=SHARED_DATA / "scifact", help="SciFact, BEIR layout")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where cjk.md goes")
    parser.add_argument(
        "--pg-dir", type=Path, default=CACHE / "pg", help="embedded PostgreSQL folder when DATABASE_URL is not set"
    )
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds (best of)")
    parser.add_argument("--smoke", action="store_true", help="60 paragraphs per set, one round")
    args = parser.parse_args(argv)
    missing = []
    for require, folder in ((require_raw, args.data), (require_beir, args.dataset)):
        try:
            require(folder)
        except MissingData as error:
            missing.append(str(error))
    if missing:  # before anything starts, and never another set instead
        print("\n\n".join(missing), file=sys.stderr)
        return 2
    quality.USE_RANX = not args.smoke
    limit = 60 if args.smoke else None
    rounds = 1 if args.smoke else max(1, args.rounds)
    sets = [load_squad(args.data / s.file, key, limit) for key, s in SOURCES.items()]
    sets.append(load_scifact(args.dataset, limit))
    probes = {key: load_probe(key) for key in PROBE}
    pg = Postgres(args.pg_dir)
    try:
        urls = {name: prepare(pg, name) for name in ANALYZERS}
        measure(sets + list(probes.values()), urls, rounds, speed={c.key for c in sets})
        for name in ANALYZERS:
            pg.drop(f"bench_cjk_{name.replace('-', '_')}")
    finally:
        pg.close()
    text = report(sets, probes, "python -m bench cjk " + " ".join(argv if argv is not None else sys.argv[1:]), rounds)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cjk.md").write_text(text, encoding="utf-8")
    print(text)
    return 0
