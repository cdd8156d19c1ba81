/** Texts of the signing pages. */
export const signing = {};
