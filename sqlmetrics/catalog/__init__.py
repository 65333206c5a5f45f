"""What a metric is: the metric files of ``sql/`` and their headers, the requests ("ndcg@10"),
and the definition profiles that map other libraries' names onto them."""
