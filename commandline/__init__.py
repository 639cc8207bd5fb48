"""What a command line is made of, for every layer's commands: options declared once on dataclass fields
(:mod:`commandline.options`) and the parser they go into (:mod:`commandline.parsing`). The bottom layer: it
imports nothing of Mirage, so builders, annotation, scoring and lint alike can use it."""
