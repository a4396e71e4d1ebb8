-- The full-text analyzer: the terms BM25 posts for a text and reads from a question
-- (30_bm25_postings.sql, 40_bm25_search.sql), and those the hub search highlights.
--
-- Han, Kana and Hangul are written without spaces between words, so English parsing sees a
-- whole clause as one "word" and a word inside it is never found. Runs of those scripts become
-- overlapping character bigrams instead, a lone character a unigram, as Lucene's CJKAnalyzer
-- does (CJKBigramFilter: a bigram never spans a space or punctuation). Everything else keeps
-- to_tsvector('english'): a text with no such character gets exactly the terms it had before.

-- The characters of those scripts: Hangul Jamo, CJK radicals, the ideographic iteration and
-- number marks, kana repeat marks, Hiragana, Katakana (not its middle dot, a separator),
-- compatibility Jamo, Katakana extensions, CJK ideographs (A, unified, compatibility), Hangul
-- syllables and Jamo extensions, half-width Katakana and Hangul, the kana supplements and the
-- supplementary ideograph planes. Escapes, not literal characters: the file stays ASCII.
CREATE OR REPLACE FUNCTION bm25_cjk_class() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT '[\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b'
           '\u3040-\u309f\u30a0-\u30fa\u30fc-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf'
           '\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7a3\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uffdc'
           '\U0001b000-\U0001b16f\U00020000-\U000323af]'
$$;

-- The text's bigrams (a run of one character: that character) with the 1-based character
-- offset where each starts, in text order. A run ends at anything outside the class, so two
-- words with a space or a comma between them never make a bigram.
CREATE OR REPLACE FUNCTION bm25_cjk_terms(p_text text)
RETURNS TABLE (term text, start integer)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT substr(r.run, i, 2), r.start + i - 1
      FROM (SELECT m.parts[2] AS run,   -- parts: what precedes the run, the run
                   (sum(char_length(m.parts[1]) + char_length(m.parts[2])) OVER (ORDER BY m.n)
                    - char_length(m.parts[2]) + 1)::integer AS start
              FROM regexp_matches(p_text, '([^' || substr(bm25_cjk_class(), 2) || '*)(' || bm25_cjk_class() || '+)', 'g')
                   WITH ORDINALITY AS m(parts, n)) r
     CROSS JOIN LATERAL generate_series(1, greatest(char_length(r.run) - 1, 1)) AS i
$$;

-- A text holding such characters: the English terms of what is around its runs, then one
-- position per bigram. Positions only count occurrences here (tf), so the bigrams need not
-- interleave with the words; a tsvector holds positions up to 16383, so the bigrams stop there
-- (a chunk is far shorter), which also keeps the value under its 1 MB limit.
CREATE OR REPLACE FUNCTION bm25_cjk_tsvector(p_text text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT to_tsvector('english', regexp_replace(p_text, bm25_cjk_class() || '+', ' ', 'g'))
           || coalesce((SELECT string_agg('''' || t.term || ''':' || t.n, ' ')::tsvector
                          FROM (SELECT b.term, row_number() OVER () AS n FROM bm25_cjk_terms(p_text) b
                                 LIMIT 16383) t), '')
$$;

-- The analyzer: what to_tsvector('english', ...) was, with runs of Han, Kana and Hangul as
-- bigrams. A plain SQL CASE, so PostgreSQL inlines it: text without those scripts pays one
-- regular-expression scan and goes on to exactly the English terms.
CREATE OR REPLACE FUNCTION bm25_tsvector(p_text text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_text ~ bm25_cjk_class() THEN bm25_cjk_tsvector(p_text)
                ELSE to_tsvector('english', p_text) END
$$;
