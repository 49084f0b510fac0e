-- How many nights each finding was seen (issue 35 item 1). A problem's state
-- and its night count come from the stored history, not from the window one
-- analysis judged: the open finding keeps its first night (first_seen) and
-- now the number of nights that raised it, so the second night of a problem
-- analysed with the default window is "ongoing, 2 nights", not "new".
ALTER TABLE findings ADD COLUMN nights integer CHECK (nights > 0);

-- Rows from before: the nights of their first and last sighting (a night is
-- the 24 h from 12:00 UTC, core/clock.h NightOf), a lower bound.
UPDATE findings
SET nights = CASE
  WHEN floor((extract(epoch FROM first_seen) - 43200) / 86400)
     = floor((extract(epoch FROM last_seen) - 43200) / 86400) THEN 1
  ELSE 2
END;
