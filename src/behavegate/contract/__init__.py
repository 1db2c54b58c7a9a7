"""Reading behavior contracts: YAML with lines, version-1 and version-2 keys, golden-query files, includes, the JSON Schema, the starter."""
