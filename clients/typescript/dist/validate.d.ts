export declare function checkKeys(where: string, o: object, allowed: readonly string[]): void;
export declare function checkObject(field: string, v: unknown): void;
export declare function checkString(field: string, v: unknown, { empty }?: {
    empty?: boolean | undefined;
}): asserts v is string;
export declare function checkInt(field: string, v: unknown, min: number, max: number): asserts v is number;
export declare function checkNumber(field: string, v: unknown, min: number, { exclusive }?: {
    exclusive?: boolean | undefined;
}): asserts v is number;
export declare function checkStrings(field: string, v: unknown): asserts v is string[];
export declare function checkFunction(field: string, v: unknown): void;
/** describe renders a value for an error message. */
export declare function describe(v: unknown): string;
/** timeParam renders a Date or an RFC 3339 string for a query. */
export declare function timeParam(field: string, v: Date | string): string;
