-- Re-post the chunks that hold Han, Kana or Hangul, whose terms the analyzer now reads as
-- character bigrams (functions/25_bm25_analyzer.sql) where it read each run of those scripts
-- as one term. Only those chunks move: every other chunk's terms are what they were, so its
-- postings stay as they are. bm25_reconcile unposts each chunk from its forward index and
-- posts it again as the triggers do (public chunks with a hub only), counters included.
-- needs: functions
SELECT bm25_reconcile(array_agg(id ORDER BY id))
  FROM chunks
 WHERE markdown ~ bm25_cjk_class() OR heading_path ~ bm25_cjk_class();
