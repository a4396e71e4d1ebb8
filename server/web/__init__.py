"""The HTTP edge: request parsing, middleware, CSRF, sessions, content negotiation, rendering and the OpenAPI contract."""
