export declare const VERSION = "0.1.0";
export declare const LIBRARY = "dtq-typescript/0.1.0";
