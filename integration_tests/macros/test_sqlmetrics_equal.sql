{#- Fails with one row per value that differs from the expected seed (group_key, metric, value;
    its rows of `metrics` and users):
    a missing or extra group, a missing or extra metric, or a value off by more than tolerance
    (relative above 1). group_key is the group values joined by '|' ('(null)' for a NULL
    value), or 'all' without groups. -#}
{% test sqlmetrics_equal(model, expected, group_by, metrics, tolerance=1e-9) %}
with actual as (
  {%- for label in ['users'] + metrics %}
  select
    {% if group_by -%}
      {%- for column in group_by -%}
        coalesce(cast({{ adapter.quote(column) }} as {{ dbt.type_string() }}), '(null)'){% if not loop.last %} || '|' || {% endif %}
      {%- endfor -%}
    {%- else %}'all'{% endif %} as group_key,
    '{{ label }}' as metric,
    cast({{ adapter.quote(label) }} as double precision) as value
  from {{ model }}
  {% if not loop.last %}union all{% endif %}
  {%- endfor %}
)
select
  expected.group_key as expected_group,
  actual.group_key as actual_group,
  expected.metric as expected_metric,
  actual.metric as actual_metric,
  expected.value as expected_value,
  actual.value as actual_value
from (
  select * from {{ expected }}
  where metric in ({% for label in ['users'] + metrics %}'{{ label }}'{% if not loop.last %}, {% endif %}{% endfor %})
) as expected
full outer join actual
  on expected.group_key = actual.group_key and expected.metric = actual.metric
where expected.metric is null
  or actual.metric is null
  or (expected.value is null) <> (actual.value is null)
  or abs(expected.value - actual.value) > {{ tolerance }} * greatest(1, abs(expected.value))
{% endtest %}
