"""make_seeds.py OUT [SHARED] — fuzz seeds from the shared conformance corpus and the
real-data YAML: OUT/seeds/<target>/ and a CEL dictionary OUT/cel.dict. Not committed:
regenerate when the corpus changes."""
import json, glob, os, hashlib, re, sys
OUT = sys.argv[1] if len(sys.argv) > 1 else '/tmp/fz'
S = sys.argv[2] if len(sys.argv) > 2 else '/work/shared'
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.chdir(os.makedirs(OUT, exist_ok=True) or OUT)
def put(d, data):
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str): data=data.encode()
    open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), 'wb').write(data)
exprs=set()
for f in glob.glob(S+'/conformance/cel/*.json'):
    for c in json.load(open(f)):
        if isinstance(c, dict) and isinstance(c.get('expr'), str): exprs.add(c['expr'])
def walk(o):
    if isinstance(o, dict):
        for k,v in o.items():
            if k=='expression' and isinstance(v,str): exprs.add(v)
            walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
cases=sorted(glob.glob(S+'/conformance/allocator/cases/*.json'))
for f in cases:
    c=json.load(open(f)); walk(c)
    put('seeds/fixture', open(f,'rb').read())
    objs=[]
    node=c.get('node')
    if isinstance(node, dict): objs.append(dict(node, kind='Node'))
    for key,kind in [('classes','DeviceClass'),('slices','ResourceSlice'),('claims','ResourceClaim'),('deviceTaintRules','DeviceTaintRule')]:
        for o in c.get(key) or []:
            if isinstance(o, dict): objs.append(dict(o, kind=o.get('kind',kind)))
    put('seeds/decode_json', json.dumps(objs))
for f in glob.glob(S+'/reference/realdata/*.y*ml')+glob.glob(ROOT+'/testdata/**/*.yaml', recursive=True):
    put('seeds/decode_yaml', open(f,'rb').read())
for f in glob.glob(ROOT+'/testdata/**/*.json', recursive=True):
    b = open(f,'rb').read()
    put('seeds/decode_json', b)
    try: c = json.loads(b)
    except ValueError: continue
    if isinstance(c, dict) and ('node' in c or 'pod' in c): put('seeds/fixture', b)   # case format
for e in exprs:
    if len(e.encode())<=10240: put('seeds/cel', e)
# CEL dictionary: identifiers and operators seen in the expressions
toks=set()
for e in exprs:
    for t in re.findall(r'[A-Za-z_][A-Za-z0-9_]*|\.\?|&&|\|\||==|!=|<=|>=|\?\.', e): toks.add(t)
with open('cel.dict','w') as d:
    for t in sorted(toks)[:3000]: d.write('"%s"\n' % t.replace('\\','\\\\').replace('"','\\"'))
    for t in ['device.attributes','device.capacity','device.driver','device.allowMultipleAllocations','"gpu.example.com"','quantity(','semver(','isSemver(','isQuantity(','.all(','.exists(','.map(','.filter(','cel.bind(','ip(','cidr(','url(','matches(','.format(','optional.of(','.orValue(','[1,2,3]','{"a":1}']:
        d.write('"%s"\n' % t.replace('"','\\"'))
for k in os.listdir('seeds'): print(k, len(os.listdir('seeds/'+k)))
