{#- The incremental pattern of the README: one row per day, recomputing the last
    `lookback_days` days on each run so that interactions arriving late are counted. Correct
    because the day is a group_by column in BOTH tables: a day's numbers read only that day's
    rows, so evaluating a subset of days gives those days' full values.
    The seeds (fixture group_by_day) have a loaded_in_run column: the test runs this model with
    var run=1 (some rows not arrived yet), then run=2 (all rows, one of them a late interaction
    for a day already computed). -#}
{{ config(materialized='incremental', unique_key=['day'], incremental_strategy='delete+insert') }}
{%- set lookback_days = 1 -%}

{%- set new_days -%}
  {%- if is_incremental() %} and day >= (select max(day) - {{ lookback_days }} from {{ this }}){% endif -%}
{%- endset -%}

{%- set recommendations -%}
  (select * from {{ ref('incremental__recommendations') }} where loaded_in_run <= {{ var('run', 2) }}{{ new_days }})
{%- endset -%}
{%- set interactions -%}
  (select * from {{ ref('incremental__interactions') }} where loaded_in_run <= {{ var('run', 2) }}{{ new_days }})
{%- endset -%}

{{ sqlmetrics.evaluate(recommendations, interactions,
                       metrics=['precision@2', 'recall@2', 'mrr@2', 'ndcg@2'],
                       group_by=['day'], columns={'relevance': none}) }}
