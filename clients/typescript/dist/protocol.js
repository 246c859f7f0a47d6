/**
 * Wire types of the chatd WebSocket protocol, versions 1 and 1.1 (and of version 1.2 the
 * fields it adds to `HELLO`'s channels, the membership frames `MEMBER`, `CHANNEL_ADDED`
 * and `CHANNEL_REMOVED`'s `reason`, and replies and threads), as the repository's
 * `docs/protocol.md` describes them.
 * Field names are the protocol's own (camelCase). Unknown fields are ignored by both sides.
 *
 * @packageDocumentation
 */
export {};
//# sourceMappingURL=protocol.js.map