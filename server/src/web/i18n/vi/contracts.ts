/** Texts of the contracts pages. */
export const contracts = {};
