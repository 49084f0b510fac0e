-- Each stored run summary's text, kept beside its jsonb (migration 015) and
-- made by the same cast when the row is written. The newest night reads one
-- summary per history run (14,235 rows for three years of a 4096-node
-- cluster): converting the jsonb to text on every read (its numbers are
-- numerics, printed digit by digit) cost ~90 ms of the server's time per
-- analysis, reading the stored text ~1/3 of that (BENCHMARKS.md, "Analyzer at
-- scale"). The text is exactly what `summary::text` returns, so the reader's
-- parser (core/run_figures_text.h) sees the same input. The jsonb stays the
-- record: the writer merges into it, and this column follows.
ALTER TABLE analysis_run_summaries
  ADD COLUMN summary_text text GENERATED ALWAYS AS (summary::text) STORED;
