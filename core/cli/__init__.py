"""The command line: argument parsing and the commands over every layer below."""
