-- DuckDB's counted plan (sqlmetrics/plan.py): diagnostics.sql's tied per list without ranking
-- it. A tie group (the list's items of one score; NULL scores are not a tie) holds the
-- positions above + 1 .. above + size, where above counts the items ranked before it; it
-- straddles a requested cutoff k ($cutoffs, a list) when it holds both k and k + 1, and counts
-- once however many cutoffs it straddles.
SELECT
  user_id,
  COUNT(*) AS tie_groups
FROM (
  SELECT
    tie.user_id,
    tie.size,
    COUNT(*) FILTER (WHERE listed.score > tie.score) AS above
  FROM (
    SELECT
      user_id,
      score,
      COUNT(*) AS size
    FROM input_recommendations
    WHERE score IS NOT NULL
    GROUP BY user_id, score
    HAVING COUNT(*) > 1
  ) AS tie
  INNER JOIN input_recommendations AS listed
    ON tie.user_id = listed.user_id
  GROUP BY tie.user_id, tie.score, tie.size
) AS groups
WHERE LEN(LIST_FILTER($cutoffs, LAMBDA k: k > above AND k < above + size)) > 0
GROUP BY user_id
