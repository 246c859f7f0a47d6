/**
 * The types of moderation (protocol §17, the project's docs/protocol.md §15): bans and
 * their pages, a channel's posting rules, flags, and what a channel's snapshot tells of
 * the user's own standing in it.
 *
 * @module
 */
export {};
//# sourceMappingURL=moderation-types.js.map