"""Events, their invitees and their availability: the contract (`EventStore` and its records) here;
`sqlite` and `postgres` fulfil it, `shared` holds what both compute the same way."""

from toolsets.infra.store.events.contract import EventChanges, EventRecord, EventStore, Invitation, NewEvent

__all__ = ["EventChanges", "EventRecord", "EventStore", "Invitation", "NewEvent"]
