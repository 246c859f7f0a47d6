export {};
//# sourceMappingURL=member-types.js.map