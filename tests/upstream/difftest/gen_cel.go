package main

// gen_cel.go: random CEL expressions over the DRA environment and random devices. A
// typed grammar: each production yields an expression of a known CEL type, so most
// expressions compile and reach evaluation; a share are ill-typed or read missing keys
// on purpose (compile and runtime errors are compared too). The top level is a
// selector (bool, or a dyn attribute read) most of the time, else an int, string or
// list expression (the derived-attribute path upstream takes for those).

import (
	"fmt"
	"strings"
)

type celGen struct {
	*gen
	depth int
}

const celDomain = "dra.example.com"

// a random device in the --device-json shape
func (g *gen) celDevice() obj {
	a := obj{}
	if g.p(0.9) {
		a["model"] = obj{"string": pick(g, "a100", "h100", "", "é-ü", "x\"y")}
	}
	if g.p(0.9) {
		a["index"] = obj{"int": pick(g, 0, 1, 7, -3, 9223372036854775807, -9223372036854775808)}
	}
	if g.p(0.6) {
		a["healthy"] = obj{"bool": g.p(0.5)}
	}
	if g.p(0.6) {
		a["version"] = obj{"version": pick(g, "1.2.3", "0.0.1", "10.0.0-alpha.1", "1.2.3+build")}
	}
	if g.p(0.5) {
		xs := arr{}
		for i := g.n(0, 4); i > 0; i-- {
			xs = append(xs, g.n(-2, 5))
		}
		a["ids"] = obj{"ints": xs}
	}
	if g.p(0.4) {
		xs := arr{}
		for i := g.n(0, 3); i > 0; i-- {
			xs = append(xs, pick(g, "a", "b", "pci0000"))
		}
		a["tags"] = obj{"strings": xs}
	}
	if g.p(0.3) {
		a["other.example.com/zone"] = obj{"string": pick(g, "z1", "z2")}
	}
	d := obj{"name": "dev-0", "driver": celDomain, "attributes": a}
	c := obj{}
	if g.p(0.8) {
		c["memory"] = obj{"value": pick(g, "80Gi", "0", "1500m", "1e3", "40G")}
	}
	if g.p(0.4) {
		c["cores"] = obj{"value": pick(g, "8", "0", "64")}
	}
	if len(c) > 0 {
		d["capacity"] = c
	}
	if g.p(0.3) {
		d["allowMultipleAllocations"] = g.p(0.5)
	}
	return d
}

func (c *celGen) attr(name string) string {
	if c.p(0.15) {
		return fmt.Sprintf("device.attributes[%q].%s", celDomain, name)
	}
	return fmt.Sprintf("device.attributes[%q].%s", celDomain, name)
}

func (c *celGen) deeper() bool { return c.depth < 4 && c.p(0.5) }

func (c *celGen) intE() string {
	c.depth++
	defer func() { c.depth-- }()
	if !c.deeper() {
		switch c.n(0, 7) {
		case 0:
			return fmt.Sprint(c.n(-5, 10))
		case 1:
			return c.attr("index")
		case 2:
			return fmt.Sprintf("%s.?index.orValue(%d)", fmt.Sprintf("device.attributes[%q]", celDomain), c.n(0, 3))
		case 3:
			return fmt.Sprintf("size(%s)", c.strE())
		case 4:
			return fmt.Sprintf("%s.size()", c.listE())
		case 5:
			return "9223372036854775807"
		case 6:
			return fmt.Sprintf("device.capacity[%q].memory.asInteger()", celDomain)
		default:
			return fmt.Sprintf("%s.major()", c.semverE())
		}
	}
	switch c.n(0, 6) {
	case 0:
		return fmt.Sprintf("(%s %s %s)", c.intE(), pick(c.gen, "+", "-", "*", "/", "%"), c.intE())
	case 1:
		return fmt.Sprintf("(%s ? %s : %s)", c.boolE(), c.intE(), c.intE())
	case 2:
		return fmt.Sprintf("%s[%s]", c.listE(), c.intE())
	case 3:
		return fmt.Sprintf("int(%s)", pick(c.gen, `"42"`, `"x"`, "3.9", "1u"))
	case 4:
		return fmt.Sprintf("math.greatest(%s, %s)", c.intE(), c.intE())
	case 5:
		return fmt.Sprintf("%s.indexOf(%s)", c.strE(), c.strE())
	default:
		return fmt.Sprintf("-%s", c.intE())
	}
}

func (c *celGen) strE() string {
	c.depth++
	defer func() { c.depth-- }()
	if !c.deeper() {
		switch c.n(0, 5) {
		case 0:
			return pick(c.gen, `"a100"`, `""`, `"pci0000"`, `"é"`, `'x'`)
		case 1:
			return c.attr("model")
		case 2:
			return "device.driver"
		case 3:
			return fmt.Sprintf("device.attributes[%q].zone", "other.example.com")
		case 4:
			return fmt.Sprintf("string(%s)", c.intE())
		default:
			return fmt.Sprintf("device.attributes[%q].?model.orValue(\"none\")", celDomain)
		}
	}
	switch c.n(0, 5) {
	case 0:
		return fmt.Sprintf("(%s + %s)", c.strE(), c.strE())
	case 1:
		return fmt.Sprintf("%s.lowerAscii()", c.strE())
	case 2:
		return fmt.Sprintf("%s.substring(%d)", c.strE(), c.n(0, 3))
	case 3:
		return fmt.Sprintf("%s.replace(%s, %s)", c.strE(), c.strE(), c.strE())
	case 4:
		return fmt.Sprintf("%s.join(\",\")", c.strListE())
	default:
		return fmt.Sprintf("(%s ? %s : %s)", c.boolE(), c.strE(), c.strE())
	}
}

func (c *celGen) strListE() string {
	switch c.n(0, 2) {
	case 0:
		return c.attr("tags")
	case 1:
		return fmt.Sprintf("[%s, %s]", c.strE(), c.strE())
	default:
		return fmt.Sprintf("%s.split(\"0\")", c.strE())
	}
}

func (c *celGen) listE() string {
	c.depth++
	defer func() { c.depth-- }()
	switch c.n(0, 6) {
	case 0:
		return c.attr("ids")
	case 1:
		return fmt.Sprintf("[%s, %s]", c.intE(), c.intE())
	case 2:
		return "[]"
	case 3:
		if c.deeper() {
			return fmt.Sprintf("%s.filter(x, x %s %d)", c.listE(), pick(c.gen, ">", "<", "=="), c.n(0, 3))
		}
		return "[1, 2, 3]"
	case 4:
		if c.deeper() {
			return fmt.Sprintf("%s.map(x, x * %d)", c.listE(), c.n(0, 3))
		}
		return "[0]"
	case 5:
		return fmt.Sprintf("lists.range(%d)", c.n(0, 5))
	default:
		if c.deeper() {
			return fmt.Sprintf("(%s + %s)", c.listE(), c.listE())
		}
		return c.attr("ids")
	}
}

func (c *celGen) semverE() string {
	switch c.n(0, 2) {
	case 0:
		return c.attr("version")
	case 1:
		return fmt.Sprintf("semver(%q)", pick(c.gen, "1.2.3", "2.0.0", "1.2.3-rc.1", "v1.0.0", "1.02.3"))
	default:
		return fmt.Sprintf("semver(%q, true)", pick(c.gen, "v1.0", "1", "01.2.3"))
	}
}

func (c *celGen) quantityE() string {
	switch c.n(0, 2) {
	case 0:
		return fmt.Sprintf("device.capacity[%q].memory", celDomain)
	case 1:
		return fmt.Sprintf("quantity(%q)", pick(c.gen, "40Gi", "1.5", "100m", "1e3", "1Ki"))
	default:
		return fmt.Sprintf("device.capacity[%q].cores", celDomain)
	}
}

func (c *celGen) boolE() string {
	c.depth++
	defer func() { c.depth-- }()
	if !c.deeper() {
		switch c.n(0, 13) {
		case 0:
			return pick(c.gen, "true", "false")
		case 1:
			return c.attr("healthy")
		case 2:
			return fmt.Sprintf("has(device.attributes[%q].%s)", celDomain, pick(c.gen, "model", "index", "nope"))
		case 3:
			return "device.allowMultipleAllocations"
		case 4:
			return fmt.Sprintf("%s.compareTo(%s) %s 0", c.quantityE(), c.quantityE(), pick(c.gen, ">=", "<", "=="))
		case 5:
			return fmt.Sprintf("%s.isLessThan(%s)", c.semverE(), c.semverE())
		case 6:
			return fmt.Sprintf("%s.matches(%q)", c.strE(), pick(c.gen, "^a", "[0-9]+", "(", ".*"))
		case 7:
			return fmt.Sprintf("%s in %s", c.intE(), c.listE())
		case 8:
			return fmt.Sprintf("%s.startsWith(%s)", c.strE(), c.strE())
		case 9:
			return fmt.Sprintf("isQuantity(%s)", c.strE())
		case 10:
			return fmt.Sprintf("%s.isSorted()", c.listE())
		case 11:
			return fmt.Sprintf("sets.contains(%s, %s)", c.listE(), c.listE())
		case 12:
			return fmt.Sprintf("%s.contains(%s)", c.strE(), c.strE())
		default:
			return fmt.Sprintf("%s.isGreaterThan(%s)", c.quantityE(), c.quantityE())
		}
	}
	switch c.n(0, 9) {
	case 0:
		return fmt.Sprintf("(%s && %s)", c.boolE(), c.boolE())
	case 1:
		return fmt.Sprintf("(%s || %s)", c.boolE(), c.boolE())
	case 2:
		return fmt.Sprintf("!%s", c.boolE())
	case 3:
		return fmt.Sprintf("(%s %s %s)", c.intE(), pick(c.gen, "==", "!=", "<", "<=", ">", ">="), c.intE())
	case 4:
		return fmt.Sprintf("(%s %s %s)", c.strE(), pick(c.gen, "==", "!=", "<", ">"), c.strE())
	case 5:
		return fmt.Sprintf("%s.all(x, %s)", c.listE(), strings.ReplaceAll(c.boolE(), c.attr("index"), "x"))
	case 6:
		return fmt.Sprintf("%s.exists(x, x %s %d)", c.listE(), pick(c.gen, ">", "==", "<"), c.n(0, 4))
	case 7:
		return fmt.Sprintf("%s.exists_one(x, x == %d)", c.listE(), c.n(0, 3))
	case 8:
		return fmt.Sprintf("(%s ? %s : %s)", c.boolE(), c.boolE(), c.boolE())
	default:
		return fmt.Sprintf("(%s == %s)", c.listE(), c.listE())
	}
}

// celCase draws one expression and one device.
func (g *gen) celCase() (string, obj) {
	c := &celGen{gen: g}
	var e string
	switch x := g.r.Float64(); {
	case x < 0.75:
		e = c.boolE()
		g.st.hit("CEL bool expression")
	case x < 0.82:
		e = c.attr(pick(g, "model", "index", "ids", "version", "nope")) // dyn: a selector whose result may not be bool
		g.st.hit("CEL dyn attribute expression")
	case x < 0.9:
		e = c.intE()
		g.st.hit("CEL int expression")
	case x < 0.95:
		e = c.strE()
		g.st.hit("CEL string expression")
	default:
		e = c.listE()
		g.st.hit("CEL list expression")
	}
	if g.p(0.01) { // a syntax error
		e = e[:len(e)/2]
		g.st.hit("CEL truncated expression")
	}
	return e, g.celDevice()
}
