package main

func runCampaign(bin string, seed int64, cases, celCases int, out, stats string, workers int) int { return 2 }
func runSpeed(bin string, seed int64, cases, celCases int) int                                    { return 2 }
