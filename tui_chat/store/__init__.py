"""The SQLite store: connection, migrations, repository, full-text search, leases."""
