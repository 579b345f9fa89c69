// The library's version, and the name it gives itself in lease calls
// ("library", shown in GET /api/v1/workers). A test keeps VERSION equal to
// package.json's.
export const VERSION = '0.1.0';
export const LIBRARY = `dtq-typescript/${VERSION}`;
