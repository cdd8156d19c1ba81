/** Texts of the verify pages. */
export const verify = {};
