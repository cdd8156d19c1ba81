/** Texts of the dashboard pages. */
export const dashboard = {};
