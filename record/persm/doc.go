// Package persm is the record layer of the bytes-per-SM family (persm/*
// rows, suites/persm): the one place that says what such a row is: its ID
// grammar, the values its points carry (names, units, ranges) and the
// facts of its mechanisms. The suite writes rows by it; report, model and
// plots read them by it.
package persm
