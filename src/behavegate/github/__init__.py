"""The edge to CI: the console output boundary, step outputs and the Action's entry point."""
