{
  "targets": [
    {
      "target_name": "external_string",
      "sources": ["external-string.c"]
    }
  ]
}
