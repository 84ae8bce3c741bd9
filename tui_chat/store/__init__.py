"""The SQLite store, the only place with SQL: connection, migrations, and one repository per
aggregate (conversations, messages, summaries with their leases, anchors, search) behind the
:class:`~tui_chat.store.repository.Store` facade."""
