/** Texts of the tasks pages. */
export const tasks = {};
