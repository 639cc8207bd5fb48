"""Question and prompt templates as data (YAML), one folder per benchmark, and their loader."""
