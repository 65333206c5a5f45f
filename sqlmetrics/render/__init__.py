"""Writing a composed query in a target dialect: the one place where engines differ."""
