export {};
//# sourceMappingURL=snapshot-types.js.map