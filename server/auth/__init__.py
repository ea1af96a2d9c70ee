"""Sign-in and secrets: who is calling (tokens, issuers' keys), the bearer check of every HTTP route, each surface's
OAuth protected-resource metadata, and secrets kept out of other processes' reach."""
