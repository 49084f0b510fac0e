// ParsedFile helpers: being written
