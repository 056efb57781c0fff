package main

import (
	"slices"
	"strings"
)

// closest returns the candidate a mistyped word most likely meant, or ""
// when none is near: the fewest edits (insert, delete, replace, or swap
// two neighbours: "dri" is one edit from "dir"), at most one for a word
// of up to four letters and two beyond; failing that, the only candidate
// the word begins (three letters at least: "boot" for "bootstrap").
func closest(word string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	limit := 1
	if len(word) > 4 {
		limit = 2
	}
	if best != "" && bestD <= limit && bestD < len(word) {
		return best
	}
	var prefixed []string
	for _, c := range candidates {
		if len(word) >= 3 && strings.HasPrefix(c, word) && !slices.Contains(prefixed, c) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// editDistance is the optimal string alignment distance between a and b
// (Levenshtein's edits plus the swap of two adjacent letters), in bytes.
func editDistance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
