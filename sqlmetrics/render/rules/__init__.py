"""The rewrites that make a composed query mean the same in every dialect, one module each
(render/dialects.py applies them in the order of its RULES)."""
