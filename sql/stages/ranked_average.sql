-- ties="average": the expected value over every order of equally scored items. For metrics that
-- add up per-position terms, that equals giving each position its tie group's mean hit and gain.
-- hits_through is the expected number of hits in positions 1..pos, in closed form: the relevant
-- items of the groups above plus this group's share, (positions of the group so far) x (its
-- relevant items) / (its size). Sums of hits read it instead of adding up the fractions, so they
-- are exact (3 hits are 3.0, not 3.0000000000000004) and do not depend on the order of addition.
SELECT
  input_recommendations.user_id,
  input_recommendations.item_id,
  ROW_NUMBER() OVER (
    PARTITION BY input_recommendations.user_id
    ORDER BY input_recommendations.score DESC NULLS LAST, input_recommendations.item_id DESC
  ) AS pos,
  input_recommendations.score,
  AVG(CASE WHEN truth.item_id IS NULL THEN 0 ELSE 1 END) OVER (
    PARTITION BY input_recommendations.user_id, input_recommendations.score
  ) AS hit,
  AVG(COALESCE(truth.relevance, 0)) OVER (
    PARTITION BY input_recommendations.user_id, input_recommendations.score
  ) AS gain,
  AVG(POWER(2, COALESCE(truth.relevance, 0)) - 1) OVER (
    PARTITION BY input_recommendations.user_id, input_recommendations.score
  ) AS exp_gain,
  SUM(CASE WHEN truth.item_id IS NULL THEN 0 ELSE 1 END) OVER (
    PARTITION BY input_recommendations.user_id
    ORDER BY input_recommendations.score DESC NULLS LAST
    RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  )
  - SUM(CASE WHEN truth.item_id IS NULL THEN 0 ELSE 1 END) OVER (
    PARTITION BY input_recommendations.user_id, input_recommendations.score
  )
  + CAST(
    (
      ROW_NUMBER() OVER (
        PARTITION BY input_recommendations.user_id
        ORDER BY input_recommendations.score DESC NULLS LAST, input_recommendations.item_id DESC
      )
      - RANK() OVER (
        PARTITION BY input_recommendations.user_id
        ORDER BY input_recommendations.score DESC NULLS LAST
      )
      + 1
    )
    * SUM(CASE WHEN truth.item_id IS NULL THEN 0 ELSE 1 END) OVER (
      PARTITION BY input_recommendations.user_id, input_recommendations.score
    ) AS DOUBLE
  )
  / COUNT(*) OVER (
    PARTITION BY input_recommendations.user_id, input_recommendations.score
  ) AS hits_through
FROM input_recommendations
LEFT JOIN truth
  ON
    input_recommendations.user_id = truth.user_id
    AND input_recommendations.item_id = truth.item_id
QUALIFY pos <= $cutoff
