"""Report renderers: each module turns a report into one text format."""
